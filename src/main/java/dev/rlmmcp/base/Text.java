package dev.rlmmcp.base;

import java.time.Duration;

/** Small text measures used for budgets and traces. */
public final class Text {

    private Text() {}

    public static long utf8Length(String s) {
        long n = s.length();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 0x80) {
                n += c < 0x800 ? 1 : 2;
                if (Character.isHighSurrogate(c)) {
                    i++;
                }
            }
        }
        return n;
    }

    public static String clip(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max) + "… (" + (s.length() - max) + " more characters)";
    }

    /** A timeout in seconds as the agent reads it. */
    public static String seconds(Duration d) {
        return d == null
                ? "unlimited"
                : (d.toMillis() % 1000 == 0
                        ? String.valueOf(d.toSeconds())
                        : String.format("%.1f", d.toMillis() / 1000.0));
    }
}
