"""Answers as text: match and compute results turned into cards, then Markdown or chat blocks.

Plain Python over the services' response models, shared by the API, the web pages and the bots.
"""
