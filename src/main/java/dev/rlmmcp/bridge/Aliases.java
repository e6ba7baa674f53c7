package dev.rlmmcp.bridge;

import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** Python identifiers for server and tool names ({@code my-server} as {@code mcp_my_server}), distinct within a group. */
public final class Aliases {

    private static final Set<String> KEYWORDS = Set.of(
            "False",
            "None",
            "True",
            "and",
            "as",
            "assert",
            "async",
            "await",
            "break",
            "class",
            "continue",
            "def",
            "del",
            "elif",
            "else",
            "except",
            "finally",
            "for",
            "from",
            "global",
            "if",
            "import",
            "in",
            "is",
            "lambda",
            "nonlocal",
            "not",
            "or",
            "pass",
            "raise",
            "return",
            "try",
            "while",
            "with",
            "yield",
            "match",
            "case",
            "type");

    private Aliases() {}

    /** One name as an identifier: lower case, runs of other characters as "_", never a digit first or a keyword. */
    public static String identifier(String name, String fallback) {
        String cleaned = name.strip().replaceAll("[^0-9a-zA-Z_]+", "_").toLowerCase(Locale.ROOT);
        if (cleaned.isEmpty()) {
            cleaned = fallback;
        }
        if (Character.isDigit(cleaned.charAt(0))) {
            cleaned = "_" + cleaned;
        }
        if (KEYWORDS.contains(cleaned)) {
            cleaned = cleaned + "_";
        }
        return cleaned;
    }

    /** Each name with its identifier; names that clash get _2, _3, ... in the order given. */
    public static Map<String, String> of(Collection<String> names, String fallback) {
        Map<String, String> aliases = new LinkedHashMap<>();
        Set<String> used = new HashSet<>();
        for (String name : names) {
            String base = identifier(name, fallback);
            String alias = base;
            for (int n = 2; !used.add(alias); n++) {
                alias = base + "_" + n;
            }
            aliases.put(name, alias);
        }
        return aliases;
    }
}
