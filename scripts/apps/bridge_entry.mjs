// The host SDK's app bridge, bundled for the host page (esbuild, format esm).
export { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
