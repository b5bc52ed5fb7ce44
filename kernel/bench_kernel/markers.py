"""The pluggy markers; the project name, the entry-point group and the markers are all 'bench'."""

import pluggy

PROJECT = "bench"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)
