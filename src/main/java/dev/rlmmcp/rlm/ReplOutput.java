package dev.rlmmcp.rlm;

import dev.rlmmcp.core.StepOutput;
import dev.rlmmcp.core.StepResult;

/** The REPL output of a code block as the model reads it in the next turn's prompt. */
final class ReplOutput {

    private ReplOutput() {}

    /**
     * What the model is shown of a block: its output, its error (the traceback where there is one) and
     * what happened to the kernel, cut to {@code cap} characters with a note saying so.
     */
    static String shown(StepResult result, int cap) {
        StepOutput exec = result.exec();
        StringBuilder out = new StringBuilder();
        if (exec != null) {
            out.append(exec.stdout());
            if (!exec.stderr().isEmpty()) {
                out.append(out.isEmpty() || out.charAt(out.length() - 1) == '\n' ? "" : "\n")
                        .append(exec.stderr());
            }
            if (exec.error() != null && exec.stderr().isEmpty()) {
                String trace = exec.error().traceback();
                out.append(out.isEmpty() || out.charAt(out.length() - 1) == '\n' ? "" : "\n")
                        .append(
                                trace != null && !trace.isBlank()
                                        ? trace
                                        : exec.error().type() + ": "
                                                + exec.error().message());
            }
        }
        String message = result.message();
        if (message != null) {
            out.append(out.isEmpty() ? "" : "\n").append("[").append(message).append("]");
        }
        if (out.isEmpty()) {
            return "(no output)";
        }
        if (out.length() > cap) {
            int all = out.length();
            out.setLength(cap);
            out.append("\n[output cut: the first ")
                    .append(cap)
                    .append(" of ")
                    .append(all)
                    .append(" characters are shown; print less, or a slice]");
        }
        return out.toString();
    }
}
