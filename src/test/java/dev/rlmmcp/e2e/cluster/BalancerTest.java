package dev.rlmmcp.e2e.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The shipped nginx configuration, rewritten for the test cluster: its nodes, its port, with or without hashing. */
class BalancerTest {

    @Test
    void theShippedConfigurationGetsTheNodesAndPortAndLosesOnlyTheHashLineForRoundRobin() throws Exception {
        String shipped = Files.readString(Balancer.SHIPPED);
        List<String> nodes = List.of("10.9.9.11:8765", "10.9.9.12:8765");

        String hashing = Balancer.render(shipped, nodes, true, 4321);
        assertThat(hashing)
                .contains("server 10.9.9.11:8765 max_fails=1 fail_timeout=2s;\n")
                .contains("server 10.9.9.12:8765 max_fails=1 fail_timeout=2s;\n")
                .doesNotContain("10.0.0.1")
                .contains("listen 127.0.0.1:4321;")
                .contains("hash $rlm_route$rlm_new_session consistent;")
                .contains("proxy_set_header Rlm-New-Session-Id $rlm_new_session;")
                .contains("map \"$http_mcp_session_id|$http_mcp_param_session_id|$arg_session_id\" $rlm_route");
        assertThat(hashing)
                .contains("server 10.9.9.11:8765 max_fails=0;\n")
                .contains("server 10.9.9.12:8765 max_fails=0;\n");
        // a POST that reached a node is never passed on to another, and a 503 never marks a node down
        assertThat(hashing).doesNotContainPattern("(?m)^\\s*proxy_next_upstream[^;#]*non_idempotent");
        assertThat(hashing).doesNotContainPattern("(?m)^\\s*proxy_next_upstream[^;#]*http_503");
        assertThat(hashing).doesNotContainPattern("(?s)upstream rlm_mcp_retry \\{[^}]*max_fails=1");

        String roundRobin = Balancer.render(shipped, nodes, false, 4321);
        assertThat(roundRobin)
                .doesNotContain("hash $rlm_route")
                .isEqualTo(hashing.replace("    hash $rlm_route$rlm_new_session consistent;\n", ""));
    }
}
