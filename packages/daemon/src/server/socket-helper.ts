/**
 * The helper process of protocol-output.ts, run by the one worker entry (workers/start-worker.ts)
 * as kind "socket-helper": sends the socket it inherited as its fd 4 back to its parent over IPC,
 * where it arrives as a new descriptor to the same socket, then leaves.
 */
import { Socket } from "node:net";

process.send!("fd1", new Socket({ fd: 4, readable: false, writable: true }), undefined, () => process.disconnect());
