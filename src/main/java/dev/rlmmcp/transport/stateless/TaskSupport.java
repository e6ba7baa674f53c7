package dev.rlmmcp.transport.stateless;

import java.util.Locale;

/**
 * Whether a tool's calls may run as tasks of the tasks extension (see {@link Tasks}): never; when a call
 * is still running after a moment (a client that declares the extension then polls it); or always (a
 * client that does not declare the extension cannot call the tool). Shown to 2026-07-28 clients as the
 * tool's {@code execution.taskSupport}.
 */
public enum TaskSupport {
    FORBIDDEN,
    OPTIONAL,
    REQUIRED;

    String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
