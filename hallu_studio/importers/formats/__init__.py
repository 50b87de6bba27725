"""One module per import format; each registers itself with ``importers.registry.register`` when imported.

Adding a format is adding a module here: the CLI's ``--format`` choices and help, the app and
``docs/formats.md``'s test read the registry. Keep these modules light (heavy readers are imported inside
``read``), since ``hallu-studio import --help`` imports them all.
"""
