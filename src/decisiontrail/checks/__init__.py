"""networkx checks, analytics and exports as pure functions of a graph; filled by the checks issue."""
