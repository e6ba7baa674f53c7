package dev.rlmmcp.bridge;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds MCP server definitions where MCP clients keep them, nearest first; the first definition of a
 * name wins: {@code --mcp-config} files, then the project ({@code ./.mcp.json},
 * {@code ./mcp-servers/*.json}, this directory's entry under {@code projects} in
 * {@code ~/.claude.json}), then the user ({@code ~/.claude.json}, {@code ~/.config/mcp/servers/*.json},
 * Claude Desktop's and Claude Code's config files). Every file has the usual shape
 * {@code {"mcpServers": {"name": {"command", "args", "env"} | {"url", "headers"}}}}; unreadable files
 * and malformed entries are skipped with a warning that names them (never their env or headers).
 */
public final class ServerConfigs {

    private static final Logger log = LoggerFactory.getLogger(ServerConfigs.class);

    /**
     * Where to look: {@code home} and {@code cwd} for the usual places (skipped when {@code implicit}
     * is false), plus the explicit files, which must exist.
     */
    public record Locations(Path home, Path cwd, List<Path> explicit, boolean implicit) {

        public Locations {
            explicit = List.copyOf(explicit);
        }

        /**
         * Every file and directory that discovery reads in {@code home} and {@code cwd}, in the order it reads
         * them (a later definition of a name wins): what a cache of anything derived from them must watch.
         */
        public static List<Path> places(Path home, Path cwd) {
            List<Path> places = new ArrayList<>(List.of(
                    cwd.resolve(".mcp.json"),
                    cwd.resolve("mcp-servers"),
                    home.resolve(".claude.json"),
                    home.resolve(".config/mcp/servers")));
            for (String app : List.of("Claude", "Claude Code")) {
                for (String name : List.of("claude_desktop_config.json", "claude_code_config.json")) {
                    places.add(home.resolve(".config").resolve(app).resolve(name));
                    places.add(home.resolve("Library/Application Support")
                            .resolve(app)
                            .resolve(name));
                }
            }
            String appData = System.getenv("APPDATA");
            if (appData != null) {
                places.add(Path.of(appData, "Claude", "claude_desktop_config.json"));
            }
            places.add(cwd.resolve("claude_desktop_config.json"));
            places.add(cwd.resolve("claude_code_config.json"));
            return places;
        }
    }

    /**
     * Every {@code mcpServers} object that discovery in {@code home} and {@code cwd} reads, as text, read with
     * Jackson's streaming parser alone: cheap enough for a start's first moments, and the same while the
     * servers are, whatever else a client rewrites in its own config file (~/.claude.json, at every start).
     */
    public static String fingerprint(Path home, Path cwd) {
        JsonFactory factory = new JsonFactory();
        Path claude = home.resolve(".claude.json");
        Path project = cwd.toAbsolutePath().normalize();
        StringWriter out = new StringWriter();
        for (Path place : Locations.places(home, cwd)) {
            List<Path> files = new ArrayList<>();
            if (Files.isDirectory(place)) {
                try (DirectoryStream<Path> entries = Files.newDirectoryStream(place, "*.json")) {
                    entries.forEach(files::add);
                } catch (IOException e) {
                    out.append("unlisted ").append(place.toString()).append('\n');
                }
                files.sort(null);
            } else if (Files.isRegularFile(place)) {
                files.add(place);
            }
            for (Path file : files) {
                try (JsonParser parser = factory.createParser(file.toFile());
                        JsonGenerator copy = factory.createGenerator(out)) {
                    out.append(file.toString()).append(' ');
                    parser.nextToken();
                    serversIn(parser, copy, file.equals(claude) ? project : null);
                } catch (IOException e) {
                    out.append("unreadable");
                }
                out.append('\n');
            }
        }
        return out.toString();
    }

    /**
     * Copies the mcpServers of the object the parser is at, and with {@code project} those of its projects
     * at and above that directory (as ~/.claude.json keeps them).
     */
    private static void serversIn(JsonParser parser, JsonGenerator copy, Path project) throws IOException {
        if (parser.currentToken() != JsonToken.START_OBJECT) {
            parser.skipChildren();
            return;
        }
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            String field = parser.currentName();
            parser.nextToken();
            if (field.equals("mcpServers")) {
                copy.copyCurrentStructure(parser);
                copy.flush();
            } else if (project != null && field.equals("projects") && parser.currentToken() == JsonToken.START_OBJECT) {
                while (parser.nextToken() == JsonToken.FIELD_NAME) {
                    boolean above = project.startsWith(parser.currentName());
                    parser.nextToken();
                    if (above) {
                        serversIn(parser, copy, null);
                    } else {
                        parser.skipChildren();
                    }
                }
            } else {
                parser.skipChildren();
            }
        }
    }

    private final ObjectMapper json;
    private final Map<String, ServerDefinition> found = new LinkedHashMap<>();

    private ServerConfigs(ObjectMapper json) {
        this.json = json;
    }

    public static List<ServerDefinition> discover(Locations where, ObjectMapper json) {
        ServerConfigs configs = new ServerConfigs(json);
        for (Path file : where.explicit()) {
            if (!Files.isRegularFile(file)) {
                throw new IllegalArgumentException("--mcp-config " + file + " is not a readable file");
            }
            configs.file(file, true);
        }
        if (where.implicit()) {
            configs.implicit(where.home(), where.cwd());
        }
        return List.copyOf(configs.found.values());
    }

    private void implicit(Path home, Path cwd) {
        Path claude = home.resolve(".claude.json");
        for (Path place : Locations.places(home, cwd)) {
            if (place.equals(claude)) {
                claude(claude, cwd);
            } else if (place.getFileName().toString().endsWith(".json")) {
                file(place, false);
            } else {
                directory(place);
            }
        }
    }

    /** ~/.claude.json: the servers of the projects at and above {@code cwd}, then the user's own. */
    private void claude(Path claude, Path cwd) {
        JsonNode claudeConfig = read(claude, false);
        if (claudeConfig != null) {
            JsonNode projects = claudeConfig.path("projects");
            for (Path dir = cwd.toAbsolutePath().normalize(); dir != null; dir = dir.getParent()) {
                JsonNode project = projects.path(dir.toString());
                if (project.isObject()) {
                    servers(project.path("mcpServers"), claude + " (project " + dir + ")");
                }
            }
            servers(claudeConfig.path("mcpServers"), claude.toString());
        }
    }

    private void directory(Path dir) {
        if (!Files.isDirectory(dir)) {
            return;
        }
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, "*.json")) {
            entries.forEach(files::add);
        } catch (IOException e) {
            log.warn("cannot list MCP server configs in {}: {}", dir, e.toString());
        }
        files.stream().sorted().forEach(f -> file(f, false));
    }

    private void file(Path file, boolean required) {
        JsonNode config = read(file, required);
        if (config != null) {
            servers(config.path("mcpServers"), file.toString());
        }
    }

    private JsonNode read(Path file, boolean required) {
        if (!Files.isRegularFile(file)) {
            return null;
        }
        try {
            return json.readTree(file.toFile());
        } catch (IOException e) {
            // Jackson's message quotes the text around the error, which may be a secret: only the line is told.
            String where = e instanceof com.fasterxml.jackson.core.JsonProcessingException p && p.getLocation() != null
                    ? " (line " + p.getLocation().getLineNr() + ")"
                    : "";
            if (required) {
                throw new IllegalArgumentException("--mcp-config " + file + " is not valid JSON" + where);
            }
            log.warn("skipping MCP config {}: not valid JSON{}", file, where);
            return null;
        }
    }

    private void servers(JsonNode servers, String source) {
        if (!servers.isObject()) {
            return;
        }
        for (Map.Entry<String, JsonNode> e : servers.properties()) {
            String name = e.getKey();
            if (found.containsKey(name)) {
                continue;
            }
            ServerDefinition definition = parse(name, e.getValue(), source);
            if (definition != null) {
                found.put(name, definition);
            }
        }
    }

    /** One entry, or null (with a warning) if it is disabled or neither a stdio nor an HTTP server. */
    static ServerDefinition parse(String name, JsonNode entry, String source) {
        if (!entry.isObject() || entry.path("disabled").asBoolean(false)) {
            return null;
        }
        String command = text(entry.get("command"));
        String url = text(entry.has("url") ? entry.get("url") : entry.get("serverUrl"));
        if (command != null && !command.isBlank()) {
            List<String> args = new ArrayList<>();
            entry.path("args").forEach(a -> args.add(a.isValueNode() ? a.asText() : a.toString()));
            return ServerDefinition.stdio(name, command, args, strings(entry.path("env")), source);
        }
        if (url != null && (url.startsWith("http://") || url.startsWith("https://"))) {
            return ServerDefinition.http(name, url, strings(entry.path("headers")), source);
        }
        log.warn("skipping MCP server '{}' in {}: it has neither a command nor an http(s) url", name, source);
        return null;
    }

    private static String text(JsonNode node) {
        return node != null && node.isTextual() ? node.asText() : null;
    }

    private static Map<String, String> strings(JsonNode object) {
        Map<String, String> values = new LinkedHashMap<>();
        if (object.isObject()) {
            for (Map.Entry<String, JsonNode> e : object.properties()) {
                values.put(
                        e.getKey(),
                        e.getValue().isValueNode()
                                ? e.getValue().asText()
                                : e.getValue().toString());
            }
        }
        return values;
    }
}
