package dev.rlmmcp.core;

/** A guardrail a step or load tripped: its name (max_steps, timeout, budget_exceeded) and what it means now. */
public record GuardrailStop(String guardrail, String message) {}
