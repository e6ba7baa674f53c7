package dev.rlmmcp.transport.stdio;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.util.Collection;
import java.util.Map;

/**
 * The answers a start makes before its SDK server exists ({@link StartupAnswers#offer}), written byte for
 * byte as the SDK's mapper writes them, with Jackson's streaming generator: the data-binding mapper's first
 * use of each record type costs a start tens of milliseconds, all of it run interpreted. Writes what
 * rlm-mcp's own server answers (its tools, its prompt, its capabilities); a value with a part it does not
 * write (annotations, icons, metadata, the capabilities of embedded extras) is {@link Unwritable}, and that
 * answer is left to the server. A test compares every answer made here with the SDK's.
 */
final class StartupJson {

    private static final JsonFactory JSON = new JsonFactory();

    /** A value with a part this writer does not write. */
    static final class Unwritable extends Exception {

        private static final long serialVersionUID = 1L;

        Unwritable(String what) {
            super(what, null, false, false);
        }
    }

    private interface Body {
        void write(JsonGenerator out) throws IOException, Unwritable;
    }

    private StartupJson() {}

    static byte[] initialize(Object id, McpSchema.InitializeResult result) throws Unwritable {
        if (result.meta() != null) {
            throw new Unwritable("_meta");
        }
        return response(id, out -> {
            out.writeStringField("protocolVersion", result.protocolVersion());
            out.writeFieldName("capabilities");
            capabilities(out, result.capabilities());
            out.writeFieldName("serverInfo");
            implementation(out, result.serverInfo());
            optional(out, "instructions", result.instructions());
        });
    }

    static byte[] tools(Object id, McpSchema.ListToolsResult result) throws Unwritable {
        if (result.nextCursor() != null || result.meta() != null) {
            throw new Unwritable("a page");
        }
        return response(id, out -> {
            out.writeArrayFieldStart("tools");
            for (McpSchema.Tool tool : result.tools()) {
                tool(out, tool);
            }
            out.writeEndArray();
        });
    }

    static byte[] prompts(Object id, McpSchema.ListPromptsResult result) throws Unwritable {
        if (result.nextCursor() != null || result.meta() != null) {
            throw new Unwritable("a page");
        }
        return response(id, out -> {
            out.writeArrayFieldStart("prompts");
            for (McpSchema.Prompt prompt : result.prompts()) {
                prompt(out, prompt);
            }
            out.writeEndArray();
        });
    }

    private static byte[] response(Object id, Body result) throws Unwritable {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(16 * 1024);
        try (JsonGenerator out = JSON.createGenerator(bytes)) {
            out.writeStartObject();
            out.writeStringField("jsonrpc", McpSchema.JSONRPC_VERSION);
            out.writeFieldName("id");
            value(out, id);
            out.writeObjectFieldStart("result");
            result.write(out);
            out.writeEndObject();
            out.writeEndObject();
        } catch (IOException e) {
            throw new Unwritable(e.toString());
        }
        return bytes.toByteArray();
    }

    private static void capabilities(JsonGenerator out, McpSchema.ServerCapabilities capabilities)
            throws IOException, Unwritable {
        if (capabilities.completions() != null
                || capabilities.experimental() != null
                || capabilities.resources() != null) {
            throw new Unwritable("capabilities beyond logging, prompts and tools");
        }
        out.writeStartObject();
        if (capabilities.logging() != null) {
            out.writeObjectFieldStart("logging");
            out.writeEndObject();
        }
        if (capabilities.prompts() != null) {
            listChanged(out, "prompts", capabilities.prompts().listChanged());
        }
        if (capabilities.tools() != null) {
            listChanged(out, "tools", capabilities.tools().listChanged());
        }
        out.writeEndObject();
    }

    private static void listChanged(JsonGenerator out, String name, Boolean listChanged) throws IOException {
        out.writeObjectFieldStart(name);
        if (listChanged != null) {
            out.writeBooleanField("listChanged", listChanged);
        }
        out.writeEndObject();
    }

    private static void implementation(JsonGenerator out, McpSchema.Implementation info)
            throws IOException, Unwritable {
        if (info.icons() != null || info.websiteUrl() != null) {
            throw new Unwritable("icons or websiteUrl");
        }
        out.writeStartObject();
        out.writeStringField("name", info.name());
        optional(out, "title", info.title());
        optional(out, "version", info.version());
        optional(out, "description", info.description());
        out.writeEndObject();
    }

    private static void tool(JsonGenerator out, McpSchema.Tool tool) throws IOException, Unwritable {
        if (tool.annotations() != null || tool.meta() != null || tool.icons() != null) {
            throw new Unwritable("annotations, _meta or icons of " + tool.name());
        }
        out.writeStartObject();
        out.writeStringField("name", tool.name());
        optional(out, "title", tool.title());
        optional(out, "description", tool.description());
        if (tool.inputSchema() != null) {
            out.writeFieldName("inputSchema");
            value(out, tool.inputSchema());
        }
        if (tool.outputSchema() != null) {
            out.writeFieldName("outputSchema");
            value(out, tool.outputSchema());
        }
        out.writeEndObject();
    }

    private static void prompt(JsonGenerator out, McpSchema.Prompt prompt) throws IOException, Unwritable {
        if (prompt.meta() != null || prompt.icons() != null) {
            throw new Unwritable("_meta or icons of " + prompt.name());
        }
        out.writeStartObject();
        out.writeStringField("name", prompt.name());
        optional(out, "title", prompt.title());
        optional(out, "description", prompt.description());
        if (prompt.arguments() != null) {
            out.writeArrayFieldStart("arguments");
            for (McpSchema.PromptArgument argument : prompt.arguments()) {
                out.writeStartObject();
                out.writeStringField("name", argument.name());
                optional(out, "title", argument.title());
                optional(out, "description", argument.description());
                if (argument.required() != null) {
                    out.writeBooleanField("required", argument.required());
                }
                out.writeEndObject();
            }
            out.writeEndArray();
        }
        out.writeEndObject();
    }

    private static void optional(JsonGenerator out, String name, String value) throws IOException {
        if (value != null) {
            out.writeStringField(name, value);
        }
    }

    /** A JSON schema's value: maps, lists, strings, numbers and booleans; a null is left to the mapper. */
    private static void value(JsonGenerator out, Object value) throws IOException, Unwritable {
        switch (value) {
            case String text -> out.writeString(text);
            case Boolean flag -> out.writeBoolean(flag);
            case Integer n -> out.writeNumber(n);
            case Long n -> out.writeNumber(n);
            case BigInteger n -> out.writeNumber(n);
            case Double n -> out.writeNumber(n);
            case Map<?, ?> map -> {
                out.writeStartObject();
                for (Map.Entry<?, ?> entry : map.entrySet()) {
                    if (!(entry.getKey() instanceof String name)) {
                        throw new Unwritable("a key that is not a string");
                    }
                    out.writeFieldName(name);
                    value(out, entry.getValue());
                }
                out.writeEndObject();
            }
            case Collection<?> list -> {
                out.writeStartArray();
                for (Object item : list) {
                    value(out, item);
                }
                out.writeEndArray();
            }
            case null, default -> throw new Unwritable("a value of " + (value == null ? "null" : value.getClass()));
        }
    }
}
