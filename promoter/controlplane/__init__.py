"""Reading the control-plane repo: git access, YAML with lines, the strict field reader, documents to objects."""
