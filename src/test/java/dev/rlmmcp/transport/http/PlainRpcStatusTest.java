package dev.rlmmcp.transport.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.tools.TextRenderer;
import dev.rlmmcp.tools.ToolCatalog;
import org.junit.jupiter.api.Test;

class PlainRpcStatusTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static int status(boolean isError, String reply) throws Exception {
        ObjectNode body = (ObjectNode) JSON.readTree(reply);
        return PlainRpcServlet.status(new ToolCatalog.Reply(body, isError, TextRenderer.View.FIRST));
    }

    @Test
    void refusalsMapToStatusesByTheirCode() throws Exception {
        assertThat(status(true, "{\"error\":{\"code\":\"INVALID_ARGUMENT\"}}")).isEqualTo(400);
        assertThat(status(true, "{\"error\":{\"code\":\"SESSION_NOT_FOUND\"}}")).isEqualTo(404);
        assertThat(status(true, "{\"error\":{\"code\":\"PERMISSION_DENIED\"}}")).isEqualTo(403);
        assertThat(status(true, "{\"error\":{\"code\":\"INTERNAL_ERROR\"}}")).isEqualTo(500);
        assertThat(status(true, "{\"error\":{\"code\":\"KERNEL_UNAVAILABLE\"}}"))
                .isEqualTo(503);
        assertThat(status(true, "{\"error\":{\"code\":\"SESSION_FINALIZED\"}}")).isEqualTo(409);
    }

    @Test
    void resultsAre200EvenWhenTheCodeRaised() throws Exception {
        assertThat(status(false, "{\"status\":\"ok\"}")).isEqualTo(200);
        assertThat(status(true, "{\"status\":\"error\",\"error\":{\"type\":\"ZeroDivisionError\"}}"))
                .isEqualTo(200);
    }
}
