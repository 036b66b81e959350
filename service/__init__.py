"""`kgqa serve`: the question-answering layer over HTTP, and its web page."""
