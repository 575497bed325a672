/** The request header that asks a page for its live part only (auto-refresh). */
export const FRAGMENT_HEADER = "x-finality-fragment";

/**
 * The only script of the dashboard, inlined: every few seconds it fetches the same address with
 * the fragment header and swaps the `#live` element's content, so numbers move without a full
 * reload. It waits while the tab is hidden, while focus is inside the live part (a form being
 * filled in or a button about to be pressed), and when switched off; a 401 (session gone) reloads
 * the page, which then shows the login form.
 */
export const LIVE_REFRESH_SCRIPT = `(() => {
  const live = document.getElementById("live");
  const toggle = document.getElementById("auto-refresh");
  if (!live || !toggle) return;
  const key = "finality.autoRefresh";
  toggle.checked = localStorage.getItem(key) !== "off";
  toggle.addEventListener("change", () => localStorage.setItem(key, toggle.checked ? "on" : "off"));
  let busy = false;
  async function refresh() {
    if (busy || !toggle.checked || document.hidden || live.contains(document.activeElement)) return;
    busy = true;
    try {
      const response = await fetch(location.href, { headers: { "${FRAGMENT_HEADER}": "1" }, credentials: "same-origin" });
      if (response.status === 401) return location.reload();
      if (!response.ok) return;
      live.innerHTML = await response.text();
      live.dataset.refreshes = String(Number(live.dataset.refreshes || "0") + 1);
      const stamp = document.getElementById("refreshed-at");
      if (stamp) stamp.textContent = new Date().toLocaleTimeString();
    } catch {
      // The server is restarting or gone: try again at the next tick.
    } finally {
      busy = false;
    }
  }
  setInterval(refresh, Number(live.dataset.refreshMs) || 5000);
})();`;
