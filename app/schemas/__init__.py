"""The API's contract: pydantic models of requests and answers, camelCase like the dataset."""
