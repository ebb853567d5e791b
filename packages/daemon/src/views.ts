/**
 * What the CLI prints and an editor shows, without I/O (`@base-context/daemon/views`): the entry
 * previews, filters and replaced counts of `base-context tree`, and the messages of
 * `base-context show`. The VS Code extension builds its views from these.
 */
export * from "./tree/view/index.js";
export { viewNativeMessage, type MessageView } from "./context/message-view.js";
