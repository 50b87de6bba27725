"""One module per tab: ``build(ctx)`` lays out the tab's components and wires its own events."""
