"""The pluggy markers; the project name, the entry-point group and the markers are all 'bench'."""

import pluggy

hookspec = pluggy.HookspecMarker("bench")
hookimpl = pluggy.HookimplMarker("bench")
