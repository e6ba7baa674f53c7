package dev.rlmmcp.transport.jsonrpc;

import java.util.ArrayList;
import java.util.List;
import java.util.ListIterator;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Long string values of a JSON message (inline data), decoded here instead of by Jackson. Jackson
 * builds a string in 128 KB char[] segments, twice the size of ASCII text, that live through young
 * collections and are then copied twice more; for 100 MB of text that cost about a second. Here a
 * long literal is unescaped straight out of the message text, and the message Jackson sees carries
 * a short random placeholder in its place, which {@link #restore} swaps back in the parsed tree.
 */
record LargeStrings(String json, List<String> values, String marker) {

    /** Literals shorter than this are left to Jackson. */
    static final int MIN_LENGTH = 1 << 16;

    /** The message with its long literals cut out, or null when it has none (or is malformed: Jackson then says how). */
    static LargeStrings lift(String text) {
        String marker = "\u0000rlm-lifted-"
                + Long.toHexString(ThreadLocalRandom.current().nextLong()) + "-";
        StringBuilder json = null;
        List<String> values = new ArrayList<>();
        int copied = 0;
        for (int open = text.indexOf('"'); open >= 0; ) {
            int close = closingQuote(text, open + 1);
            if (close < 0) {
                return null;
            }
            if (close - open - 1 >= MIN_LENGTH && !isKey(text, close + 1)) {
                String value = unescape(text, open + 1, close);
                if (value == null) {
                    return null;
                }
                json = json == null ? new StringBuilder() : json;
                json.append(text, copied, open)
                        .append("\"\\u0000")
                        .append(marker, 1, marker.length())
                        .append(values.size())
                        .append('"');
                values.add(value);
                copied = close + 1;
            }
            open = text.indexOf('"', close + 1);
        }
        return json == null
                ? null
                : new LargeStrings(json.append(text, copied, text.length()).toString(), values, marker);
    }

    /** Puts the lifted values back in place of their placeholders, in maps and lists at any depth. */
    Object restore(Object node) {
        if (node instanceof String s && s.startsWith(marker)) {
            return values.get(Integer.parseInt(s, marker.length(), s.length(), 10));
        }
        if (node instanceof Map<?, ?> map) {
            for (Map.Entry<?, ?> e : map.entrySet()) {
                @SuppressWarnings("unchecked")
                Map.Entry<Object, Object> entry = (Map.Entry<Object, Object>) e;
                entry.setValue(restore(entry.getValue()));
            }
        } else if (node instanceof List<?> list) {
            @SuppressWarnings("unchecked")
            ListIterator<Object> items = (ListIterator<Object>) list.listIterator();
            while (items.hasNext()) {
                items.set(restore(items.next()));
            }
        }
        return node;
    }

    private static int closingQuote(String text, int from) {
        for (int quote = text.indexOf('"', from); quote >= 0; quote = text.indexOf('"', quote + 1)) {
            int backslashes = 0;
            while (quote - backslashes > from && text.charAt(quote - backslashes - 1) == '\\') {
                backslashes++;
            }
            if (backslashes % 2 == 0) {
                return quote;
            }
        }
        return -1;
    }

    private static boolean isKey(String text, int from) {
        int i = from;
        while (i < text.length()
                && (text.charAt(i) == ' '
                        || text.charAt(i) == '\t'
                        || text.charAt(i) == '\n'
                        || text.charAt(i) == '\r')) {
            i++;
        }
        return i < text.length() && text.charAt(i) == ':';
    }

    /** The JSON string body text[from, to) unescaped, or null if an escape is invalid. */
    static String unescape(String text, int from, int to) {
        int escape = text.indexOf('\\', from, to);
        if (escape < 0) {
            return text.substring(from, to);
        }
        StringBuilder out = new StringBuilder(to - from);
        int run = from;
        while (escape >= 0) {
            out.append(text, run, escape);
            if (escape + 1 >= to) {
                return null;
            }
            char c = text.charAt(escape + 1);
            run = escape + 2;
            switch (c) {
                case 'n' -> out.append('\n');
                case '"', '\\', '/' -> out.append(c);
                case 't' -> out.append('\t');
                case 'r' -> out.append('\r');
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'u' -> {
                    int code = escape + 6 <= to ? hex4(text, escape + 2) : -1;
                    if (code < 0) {
                        return null;
                    }
                    out.append((char) code);
                    run = escape + 6;
                }
                default -> {
                    return null;
                }
            }
            escape = text.indexOf('\\', run, to);
        }
        return out.append(text, run, to).toString();
    }

    private static int hex4(String text, int at) {
        int code = 0;
        for (int i = at; i < at + 4; i++) {
            char c = text.charAt(i);
            int digit = c < 128 ? Character.digit(c, 16) : -1;
            if (digit < 0) {
                return -1;
            }
            code = code << 4 | digit;
        }
        return code;
    }
}
