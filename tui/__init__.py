"""engram's terminal front-ends: the Textual app (`tui.app`) and the command line (`tui.cli`)."""
