package dev.rlmmcp.tools;

import dev.rlmmcp.base.RlmException;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a call does with arguments its tool does not take. Agent clients add arguments of their own to every
 * tool (Gemini CLI adds {@code wait_for_previous} and tells the model it must set it), and models add
 * others they were never shown: refusing those would fail calls that mean exactly what they say. So an
 * unknown argument is ignored and named in the reply, but one that looks like a misspelling of an argument
 * the tool takes is refused: ignoring {@code sesion_id} would run the call in another session, ignoring
 * {@code timout_s} under another limit, silently. Arguments known to be a client's own are dropped unnamed.
 */
final class UnknownArguments {

    /** Added to every tool by a client, for the client: Gemini CLI's sequencing flag. */
    static final Set<String> CLIENT_ADDED = Set.of("wait_for_previous");

    private UnknownArguments() {}

    /**
     * The arguments of {@code given} that {@code tool} ignores (sorted, those of {@link #CLIENT_ADDED} left
     * out). Throws INVALID_ARGUMENT for the first one that looks like a misspelling of one of {@code allowed}.
     */
    static List<String> ignored(String tool, Collection<String> given, List<String> allowed) {
        Set<String> unknown = new TreeSet<>(given);
        unknown.removeAll(allowed);
        unknown.removeAll(CLIENT_ADDED);
        for (String name : unknown) {
            String meant = meant(name, allowed);
            if (meant != null) {
                throw RlmException.invalid(
                        name,
                        tool + " has no argument " + name + "; did you mean " + meant + "?",
                        "pass " + meant + " instead (" + tool + " takes: " + String.join(", ", allowed) + ")");
            }
        }
        return List.copyOf(unknown);
    }

    /**
     * The argument of {@code allowed} that {@code name} most likely misspells, or null: one of its words
     * ({@code name} for {@code var_name}, {@code timeout} for {@code timeout_s}), the same letters but for
     * case, underscores and hyphens ({@code sessionId}), else at most one edit away (two for longer names),
     * an edit being a letter added, dropped, changed, or two neighbours swapped.
     */
    static String meant(String name, List<String> allowed) {
        String key = letters(name);
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String candidate : allowed) {
            String other = letters(candidate);
            String lower = candidate.toLowerCase(Locale.ROOT);
            String word = name.toLowerCase(Locale.ROOT);
            int distance = lower.startsWith(word + "_") || lower.endsWith("_" + word) ? 1 : distance(key, other);
            int most = Math.min(key.length(), other.length()) <= 5 ? 1 : 2;
            if (distance <= most && distance < bestDistance) {
                best = candidate;
                bestDistance = distance;
            }
        }
        return best;
    }

    private static String letters(String name) {
        return name.toLowerCase(Locale.ROOT).replace("_", "").replace("-", "");
    }

    /** Edits from a to b: insertions, deletions, substitutions and swaps of neighbours (optimal string alignment). */
    private static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
