"""What the assistant does to the repository beside answering: the model's repository
tools and the tool loop that runs them (``tools``, ``toolloop``), edits parsed, applied,
committed and undone (``edits``), commands run only in the jail (``jail``), and the
``workbench`` that gives all of it to the app and the headless command line.
"""
