/**
 * The command line and the wiring: {@link dev.rlmmcp.cli.Main} parses the options (picocli) and runs a
 * command ({@code stdio}, {@code serve}, {@code ask}, the hidden {@code train}); {@code Assembly} builds
 * the layers once, from the host policy and the options, and hands them to a transport. The top layer:
 * it may use every other package, and none may use it.
 */
package dev.rlmmcp.cli;
