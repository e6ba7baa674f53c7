package dev.rlmmcp.rlm;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a model's turn holds: its code blocks (```repl or ```python, in order), and a final answer
 * written in the text outside them, as the paper's prompts ask for it: {@code FINAL(text)} or
 * {@code FINAL_VAR(name)} at the start of a line.
 */
record CodeBlocks(List<String> code, String finalText, String finalVar) {

    private static final Pattern BLOCK = Pattern.compile("```(?:repl|python|py)[ \\t]*\\r?\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern FINAL_VAR =
            Pattern.compile("^\\s*FINAL_VAR\\(\\s*[\"']?([A-Za-z_][A-Za-z0-9_]*)[\"']?\\s*\\)", Pattern.MULTILINE);
    private static final Pattern FINAL =
            Pattern.compile("^\\s*FINAL\\((.*)\\)\\s*$", Pattern.MULTILINE | Pattern.DOTALL);

    static CodeBlocks parse(String response) {
        List<String> code = new ArrayList<>();
        StringBuilder prose = new StringBuilder();
        Matcher m = BLOCK.matcher(response);
        int at = 0;
        while (m.find()) {
            prose.append(response, at, m.start()).append('\n');
            String block = m.group(1).strip();
            if (!block.isEmpty()) {
                code.add(block);
            }
            at = m.end();
        }
        prose.append(response.substring(at));
        String text = prose.toString();
        Matcher var = FINAL_VAR.matcher(text);
        if (var.find()) {
            return new CodeBlocks(code, null, var.group(1));
        }
        Matcher fin = FINAL.matcher(text);
        return new CodeBlocks(code, fin.find() ? unquote(fin.group(1).strip()) : null, null);
    }

    boolean answers() {
        return finalText != null || finalVar != null;
    }

    private static String unquote(String s) {
        if (s.length() >= 2 && (s.startsWith("\"") && s.endsWith("\"") || s.startsWith("'") && s.endsWith("'"))) {
            return s.substring(1, s.length() - 1);
        }
        return s;
    }
}
