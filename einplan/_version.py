"""The package version: read by pyproject.toml's build and by einplan itself."""
__version__ = "0.1.0"
