package dev.rlmmcp.core;

/** Small text measures used for budgets and traces. */
final class Text {

    private Text() {
    }

    static long utf8Length(String s) {
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

    static String clip(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max) + "… (" + (s.length() - max) + " more characters)";
    }
}
