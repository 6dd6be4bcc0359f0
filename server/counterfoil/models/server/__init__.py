"""Models an OpenAI-compatible server serves: the endpoint's options and checks, the streaming
client, the JSON schema it is asked to enforce, its stream read and its token counts."""
