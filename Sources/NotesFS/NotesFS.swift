// NotesFS module: see README.md.
