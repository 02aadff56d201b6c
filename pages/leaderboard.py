"""Leaderboard: systems x judges (being built, issue 11 item 9)."""

import streamlit as st

st.title("Leaderboard")
st.info("The systems x judges leaderboard is being built.")
