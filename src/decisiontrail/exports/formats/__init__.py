"""One module per export format (two JSON ones share one): each makes a group's part of a document
(``make_part``) and puts parts together into the document (``assemble``), a line at a time.
"""
