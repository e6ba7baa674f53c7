/**
 * Data from outside the server for the data tools: files under the data root ({@link dev.rlmmcp.data.DataRoot}),
 * S3 objects ({@link dev.rlmmcp.data.S3Store}) and http(s) URLs ({@link dev.rlmmcp.data.UrlFetcher}, with
 * {@link dev.rlmmcp.data.UrlPolicy} deciding which addresses it may reach), streamed with a cap on each
 * transfer's size; {@link dev.rlmmcp.data.DataSources} holds them together. A sibling of kernel, llm, store
 * and bridge: it may use only {@code dev.rlmmcp.base} (and the AWS SDK).
 */
package dev.rlmmcp.data;
