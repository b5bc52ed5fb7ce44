"""Conversations: messages, participants, channels, events and the loop that runs them."""
