"""The web pages: paste a traceback, compute fixes, search and read records.

Server-rendered with Jinja2 and readable without JavaScript; static/errata.js only adds
in-place results and copy buttons.
"""
