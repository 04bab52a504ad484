"""The run profiles every paper's params define (a module of its own: the CLI lists them without pydantic)."""

PROFILES = ("smoke", "default", "full")
