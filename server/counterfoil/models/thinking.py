"""A response as the agent reads it: whatever the model thought before answering is dropped."""


def strip_thinking(text: str) -> str:
    """The text after a closing `</think>`, nothing for an unfinished thinking block, else all."""
    if "</think>" in text:
        return text.rsplit("</think>", 1)[1].strip()
    if text.lstrip().startswith("<think>"):
        return ""
    return text.strip()
