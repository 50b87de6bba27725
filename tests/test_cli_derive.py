from hallu_studio.cli import main
from hallu_studio.model import Benchmark, Sample, SceneGraph
from hallu_studio.store import Store


def _graph(names):
    return SceneGraph.from_dict({"objects": [{"id": str(i), "name": n, "attributes": ["red"]} for i, n in enumerate(names)],
                                 "relations": [{"subject": "0", "predicate": "on", "object": "1"}]})


def test_derive_pope_makes_a_yes_no_benchmark_from_the_scene_graphs(tmp_path, capsys):
    db = tmp_path / "d.duckdb"
    with Store(db) as st:
        st.add_samples(Benchmark("b"), [
            Sample(id="b/1", benchmark="b", image_key="1", scene_graph=_graph(["cup", "table", "lamp"])),
            Sample(id="b/2", benchmark="b", image_key="2", scene_graph=_graph(["dog", "sofa", "rug"]))])
    assert main(["derive", "pope", "--benchmark", "b", "--strategy", "popular", "--db", str(db)]) == 0
    assert "b-pope-popular" in capsys.readouterr().out
    with Store(db) as st:
        derived = list(st.iter_samples("b-pope-popular"))
        assert derived and {s.task for s in derived} == {"yes_no"}
        assert {s.answer for s in derived} == {"yes", "no"}
        assert {s.meta["kind"] for s in derived} == {"object", "attribute", "relation"}
    # derived again: nothing new; an unknown source is a clear error
    assert main(["derive", "pope", "--benchmark", "b", "--strategy", "popular", "--db", str(db)]) == 0
    assert "0 added" in capsys.readouterr().out
    assert main(["derive", "pope", "--benchmark", "nope", "--db", str(db)]) == 2
