"""engram's terminal front-ends: the headless CLI now, the Textual app later."""
