"""The LangGraph integration: the record_decision tool, snapshot capture, replay; filled by the recording issue."""
