"""Chat-ops: the /errata slash command for Slack and Mattermost, as plain Python.

``commands`` reads what was typed, ``answers`` carries it out as cards, and ``slack`` and
``mattermost`` write the cards the way each chat wants them. The HTTP side is app/api/chatops.py.
"""
