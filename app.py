"""HalluStudio's web app: ``python app.py --help`` (see docs/app.md)."""

import sys

from hallu_studio.config import apply_offline_env_defaults

# Before Gradio is imported: no analytics, no hub downloads, nothing phones home.
apply_offline_env_defaults()

from hallu_studio.app.main import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
