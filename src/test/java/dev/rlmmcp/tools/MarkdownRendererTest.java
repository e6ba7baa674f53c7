package dev.rlmmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

class MarkdownRendererTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static String render(String tool, String reply) throws Exception {
        return MarkdownRenderer.render(tool, (ObjectNode) JSON.readTree(reply));
    }

    @Test
    void anExecuteReplyShowsOutputAndTracebackInCodeBlocks() throws Exception {
        String md = render("rlm_execute", """
                {"status": "error", "session_id": "s-1", "stdout": "hello\\nworld\\n", "stderr": "",
                 "error": {"type": "NameError", "message": "name 'x' is not defined",
                           "traceback": "Traceback (most recent call last):\\n  File \\"<cell>\\", line 2\\nNameError: x"},
                 "variables_changed": ["total"], "variables_deleted": [], "duration_ms": 0.02, "evicted": [],
                 "memory": {"total_bytes": 28, "limit_bytes": 1024, "percent": 2.73}}""");

        assertThat(md)
                .startsWith("## rlm_execute: error\n")
                .contains("session_id: s-1\n")
                .contains("stdout:\n```\nhello\nworld\n```\n")
                .doesNotContain("stderr")
                .contains("**ERROR NameError**: name 'x' is not defined\n")
                .contains(
                        "traceback:\n```\nTraceback (most recent call last):\n  File \"<cell>\", line 2\nNameError: x\n```\n")
                .contains("variables_changed: total\n")
                .contains("variables_deleted: none\n")
                .contains("duration_ms: 0.02\n")
                .contains("memory: total_bytes: 28 · limit_bytes: 1024 · percent: 2.73\n")
                .doesNotContain("status:");
    }

    @Test
    void aFenceIsLongerThanAnyBacktickRunInside() throws Exception {
        String md = render("rlm_execute", """
                {"status": "ok", "stdout": "```python\\nx = 1\\n````\\n"}""");
        assertThat(md).contains("stdout:\n`````\n```python\nx = 1\n````\n`````\n");
    }

    @Test
    void aListOfVariablesIsABulletPerVariable() throws Exception {
        String md = render("rlm_list_vars", """
                {"session_id": "s-2", "variables": [
                  {"name": "rows", "type": "list", "size_human": "8.9 KiB", "length": 100, "preview": "[{'n': 0}, …]"},
                  {"name": "tick", "type": "str", "length": 1, "preview": "'`'"}],
                 "memory": {"total_bytes": 9100}}""");
        assertThat(md)
                .startsWith("## rlm_list_vars\n")
                .contains("variables (2):\n"
                        + "- name: rows · type: list · size_human: 8.9 KiB · length: 100 · preview: `[{'n': 0}, …]`\n"
                        + "- name: tick · type: str · length: 1 · preview: ``'`'``\n")
                .contains("memory: total_bytes: 9100\n");
    }

    @Test
    void multiLineFieldsOfListItemsGoInIndentedBlocks() throws Exception {
        String md = render("rlm_get_trace", """
                {"steps": [{"step": 0, "code": "a = 1\\nprint(a)", "duration_ms": 1.5}]}""");
        assertThat(md)
                .contains("steps (1):\n- step: 0 · duration_ms: 1.5\n  code:\n  ```\n  a = 1\n  print(a)\n  ```\n");
    }

    @Test
    void aRefusalNamesTheCodeTheArgumentAndTheFix() throws Exception {
        String md = render("rlm_load_data", """
                {"error": {"code": "INVALID_ARGUMENT", "message": "'2fast' is not a valid Python variable name",
                           "argument": "name", "fix": "use a Python identifier such as logs"}}""");
        assertThat(md).isEqualTo("""
                ## rlm_load_data: refused
                **ERROR INVALID_ARGUMENT**: '2fast' is not a valid Python variable name
                argument: name
                fix: use a Python identifier such as logs
                """);
    }
}
