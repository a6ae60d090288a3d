"""Defaults shared by the library and the command line, apart so that `--help` stays cheap."""

DEFAULT_EXAMPLES = 50
"""Generated records per migration step and direction (`evalreg check`)."""

DEFAULT_BASE_URL = "https://evalreg.github.io/schemas/"
"""Where published schemas live unless told otherwise (`evalreg publish`)."""
