"""The OpenAI-compatible Chat Completions kind (OpenAI, Ollama's /v1, LM Studio, llama.cpp, vLLM,
OpenRouter, Groq): the SDK client and what each model is sent.
"""
