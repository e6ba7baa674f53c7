package dev.rlmmcp.bridge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServerConfigsTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path home;

    @TempDir
    Path project;

    private void write(Path file, String json) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, json);
    }

    private List<ServerDefinition> discover(List<Path> explicit, boolean implicit) {
        return ServerConfigs.discover(new ServerConfigs.Locations(home, project, explicit, implicit), JSON);
    }

    private static Map<String, ServerDefinition> byName(List<ServerDefinition> found) {
        return found.stream().collect(java.util.stream.Collectors.toMap(ServerDefinition::name, d -> d));
    }

    @Test
    void theFingerprintChangesWithTheServersDiscoveryReadsAndNothingElse() throws IOException {
        Path claude = home.resolve(".claude.json");
        String other = project.resolveSibling(project.getFileName() + "-other").toString();
        write(claude, """
                {"numStartups": 1, "mcpServers": {"notes": {"command": "notes"}},
                 "projects": {"%s": {"mcpServers": {"here": {"command": "h"}}, "history": [1]},
                              "%s": {"mcpServers": {"there": {"command": "t"}}}}}""".formatted(project, other));
        write(project.resolve(".mcp.json"), "{\"mcpServers\": {\"local\": {\"url\": \"http://127.0.0.1:9/mcp\"}}}");
        write(home.resolve(".config/mcp/servers/extra.json"), "{\"mcpServers\": {\"extra\": {\"command\": \"e\"}}}");
        String first = ServerConfigs.fingerprint(home, project);
        assertThat(first).contains("notes", "here", "local", "extra").doesNotContain("there", "numStartups", "history");

        write(
                claude,
                Files.readString(claude)
                        .replace("\"numStartups\": 1", "\"numStartups\": 2, \"tips\": {\"a\": 1}")
                        .replace("\"history\": [1]", "\"history\": [1, 2]"));
        assertThat(ServerConfigs.fingerprint(home, project))
                .as("a client's own state rewritten")
                .isEqualTo(first);

        write(
                claude,
                Files.readString(claude)
                        .replace("{\"command\": \"notes\"}", "{\"command\": \"notes\", \"disabled\": true}"));
        assertThat(ServerConfigs.fingerprint(home, project))
                .as("a server disabled")
                .isNotEqualTo(first);
    }

    @Test
    void findsServersInEveryUsualPlaceAndTheNearestDefinitionWins() throws IOException {
        write(home.resolve(".claude.json"), """
                {"mcpServers": {"user": {"command": "u"}, "shared": {"command": "from-user"}},
                 "projects": {"%s": {"mcpServers": {"proj": {"command": "p", "args": ["-x", 1]}}},
                              "/elsewhere": {"mcpServers": {"other": {"command": "o"}}}}}""".formatted(project.toString().replace("\\", "\\\\")));
        write(home.resolve(".config/mcp/servers/a.json"), """
                {"mcpServers": {"dir": {"command": "d", "env": {"TOKEN": "t0k3n"}}}}""");
        write(home.resolve(".config/Claude/claude_desktop_config.json"), """
                {"mcpServers": {"desktop": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}}}}""");
        write(project.resolve(".mcp.json"), """
                {"mcpServers": {"shared": {"command": "from-project"}}}""");
        write(project.resolve("mcp-servers/b.json"), """
                {"mcpServers": {"local": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}}""");
        Map<String, ServerDefinition> found = byName(discover(List.of(), true));
        assertThat(found).containsOnlyKeys("user", "shared", "proj", "dir", "desktop", "local");
        assertThat(found.get("shared").command()).isEqualTo("from-project");
        assertThat(found.get("proj").args()).containsExactly("-x", "1");
        assertThat(found.get("dir").env()).containsEntry("TOKEN", "t0k3n");
        assertThat(found.get("desktop").isHttp()).isTrue();
        assertThat(found.get("desktop").headers()).containsEntry("Authorization", "Bearer x");
        assertThat(found.get("local").url()).isEqualTo("http://127.0.0.1:9/mcp");
    }

    @Test
    void explicitFilesWinAndImplicitDiscoveryCanBeSwitchedOff() throws IOException {
        write(home.resolve(".claude.json"), """
                {"mcpServers": {"a": {"command": "implicit"}, "b": {"command": "implicit"}}}""");
        Path explicit = project.resolve("given.json");
        write(explicit, """
                {"mcpServers": {"a": {"command": "explicit", "args": ["x"], "env": {"K": "V"}}}}""");
        assertThat(byName(discover(List.of(explicit), true)).get("a").command()).isEqualTo("explicit");
        assertThat(discover(List.of(explicit), false))
                .extracting(ServerDefinition::name)
                .containsExactly("a");
        assertThat(discover(List.of(), false)).isEmpty();
    }

    @Test
    void badFilesAndEntriesAreSkippedButABadExplicitFileStopsTheStart() throws IOException {
        write(home.resolve(".claude.json"), "{not json");
        write(project.resolve(".mcp.json"), """
                {"mcpServers": {"off": {"command": "x", "disabled": true}, "neither": {"args": []},
                 "ftp": {"url": "ftp://x"}, "ok": {"command": "fine"}}}""");
        assertThat(discover(List.of(), true)).extracting(ServerDefinition::name).containsExactly("ok");
        Path broken = project.resolve("broken.json");
        write(broken, "{\"mcpServers\": {\"a\": {\"command\": \"sk-secret-value\"");
        assertThatThrownBy(() -> discover(List.of(broken), false))
                .hasMessageContaining("not valid JSON")
                .hasMessageNotContaining("sk-secret-value");
        assertThatThrownBy(() -> discover(List.of(project.resolve("missing.json")), false))
                .hasMessageContaining("missing.json");
    }

    @Test
    void aDefinitionNeverShowsItsSecrets() {
        ServerDefinition stdio = ServerDefinition.stdio("s", "cmd", List.of("a"), Map.of("API_KEY", "sk-123"), "f");
        ServerDefinition http =
                ServerDefinition.http("h", "https://x/mcp", Map.of("Authorization", "Bearer sk-456"), "f");
        assertThat(stdio.toString()).contains("API_KEY").doesNotContain("sk-123");
        assertThat(http.toString()).contains("Authorization").doesNotContain("sk-456");
        assertThat(stdio.describe()).isEqualTo("cmd (1 argument)");
        assertThat(ServerDefinition.stdio("t", "srv", List.of("--token", "sk-789"), Map.of(), "f")
                        .toString())
                .doesNotContain("sk-789");
        assertThat(ServerDefinition.http("q", "https://x/mcp?key=sk-000", Map.of(), "f")
                        .toString())
                .doesNotContain("sk-000");
    }

    @Test
    void aliasesAreDistinctPythonIdentifiers() {
        assertThat(Aliases.of(
                        List.of("everything", "my-server", "My Server", "2fast", "class", "get-sum", "get_sum"),
                        "server"))
                .containsExactly(
                        Map.entry("everything", "everything"),
                        Map.entry("my-server", "my_server"),
                        Map.entry("My Server", "my_server_2"),
                        Map.entry("2fast", "_2fast"),
                        Map.entry("class", "class_"),
                        Map.entry("get-sum", "get_sum"),
                        Map.entry("get_sum", "get_sum_2"));
        assertThat(Aliases.identifier("---", "tool")).isEqualTo("_");
        assertThat(Aliases.identifier("", "tool")).isEqualTo("tool");
    }
}
