"""Examples: one comparison up close (being built, issue 11 item 8)."""

import streamlit as st

st.title("Examples")
st.info("The per-example browser is being built.")
