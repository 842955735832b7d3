"""The web surface: the FastAPI app (chat API with streaming, tool endpoints), the embeddable widget's static files,
and the Slack adapter. It adds transport, limits and rendering only; all advice comes from `agent` and `tools`.
"""
