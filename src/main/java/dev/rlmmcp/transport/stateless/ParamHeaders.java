package dev.rlmmcp.transport.stateless;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code Mcp-Param-*} headers of protocol 2026-07-28: a tool argument whose schema names an
 * {@code x-mcp-header} travels in that header too (as is, or as {@code =?base64?...?=}), so that a
 * proxy can route on it without reading the body; the server checks that header and body agree.
 */
final class ParamHeaders {

    static final String PREFIX = "Mcp-Param-";
    private static final Pattern WRAPPED = Pattern.compile("=\\?base64\\?(.*)\\?=");
    private static final Pattern BASE64 =
            Pattern.compile("(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?");

    private ParamHeaders() {}

    /**
     * What is wrong with a call's Mcp-Param headers for these arguments ({@code named}: argument → header
     * name), or null if each argument given comes with its header, and each header matches its argument.
     */
    static String mismatch(Map<String, String> named, Map<?, ?> arguments, UnaryOperator<String> headers) {
        for (Map.Entry<String, String> entry : named.entrySet()) {
            String header = PREFIX + entry.getValue();
            Object argument = arguments == null ? null : arguments.get(entry.getKey());
            String sent = headers.apply(header);
            if (argument == null && sent == null) {
                continue;
            }
            if (sent == null) {
                return "the " + header + " header is missing; it must repeat the argument " + entry.getKey();
            }
            String value = decoded(sent.strip());
            if (value == null) {
                return "the " + header + " header is not valid =?base64?...?= (standard alphabet, padded)";
            }
            if (argument == null || !value.equals(argument instanceof String s ? s : String.valueOf(argument))) {
                return "the " + header + " header does not match the argument " + entry.getKey();
            }
        }
        return null;
    }

    /** The header's value: as sent, or decoded from =?base64?...?=; null if that is not valid Base64 of UTF-8. */
    static String decoded(String value) {
        Matcher wrapped = WRAPPED.matcher(value);
        if (!wrapped.matches()) {
            return value;
        }
        String encoded = wrapped.group(1);
        if (!BASE64.matcher(encoded).matches()) {
            return null;
        }
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(Base64.getDecoder().decode(encoded)))
                    .toString();
        } catch (IllegalArgumentException | CharacterCodingException e) {
            return null;
        }
    }
}
