"""QrelForge's app: the Streamlit pages, the services, the store, machine judges and the CLI."""
