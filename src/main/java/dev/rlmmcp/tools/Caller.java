package dev.rlmmcp.tools;

/** Who is calling: the client connection, whose default session a call without session_id uses. */
public record Caller(String connection) {
}
