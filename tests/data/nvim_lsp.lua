-- Headless Neovim as a user's editor: kubelint-ml lsp attached to a manifest; what the editor
-- shows is written to OUT as JSON for tests/test_lsp_neovim.py to compare with `check`.
local python, file, out = os.getenv("KLM_PYTHON"), os.getenv("KLM_FILE"), os.getenv("KLM_OUT")
local result = { steps = {} }
local function done()
  local fh = io.open(out, "w")
  fh:write(vim.fn.json_encode(result))
  fh:close()
  vim.cmd("qa!")
end
local ok, err = pcall(function()
  local id = vim.lsp.start_client({
    cmd = { python, "-m", "kubelint_ml", "lsp" },
    root_dir = vim.fn.fnamemodify(file, ":h"),
    workspace_folders = { { uri = vim.uri_from_fname(vim.fn.fnamemodify(file, ":h")), name = "w" } },
    init_options = { unsafeFixes = true },
  })
  vim.cmd("edit " .. file)
  vim.lsp.buf_attach_client(0, id)
  local function diags()
    local list = {}
    for _, d in ipairs(vim.diagnostic.get(0)) do
      local lsp = (d.user_data or {}).lsp or {}
      table.insert(list, { line = d.lnum + 1, col = d.col, code = d.code or lsp.code, severity = d.severity })
    end
    return list
  end
  vim.wait(15000, function() return #vim.diagnostic.get(0) > 0 end, 20)
  result.diagnostics = diags()
  local original = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  -- a quick fix at a fixable finding: the invalid quantity
  for _, d in ipairs(vim.diagnostic.get(0)) do
    local lsp = (d.user_data or {}).lsp or {}
    if (d.code or lsp.code) == "invalid-quantity" then
      local params = {
        textDocument = { uri = vim.uri_from_bufnr(0) },
        range = { start = { line = d.lnum, character = d.col }, ["end"] = { line = d.lnum, character = d.col } },
        context = { diagnostics = {}, only = { "quickfix" } },
      }
      local answers = vim.lsp.buf_request_sync(0, "textDocument/codeAction", params, 5000) or {}
      result.quickfixes = {}
      for _, a in pairs(answers) do
        for _, action in ipairs(a.result or {}) do table.insert(result.quickfixes, action.title) end
      end
      local hover = vim.lsp.buf_request_sync(0, "textDocument/hover",
        { textDocument = { uri = vim.uri_from_bufnr(0) }, position = { line = d.lnum, character = d.col } }, 5000) or {}
      for _, h in pairs(hover) do
        if h.result then result.hover = h.result.contents.value end
      end
    end
  end
  -- a YAML error typed in, then undone
  local kind_line
  for i, l in ipairs(original) do if l:match("^kind:") then kind_line = i end end
  local t0 = vim.loop.hrtime()
  vim.api.nvim_buf_set_lines(0, kind_line - 1, kind_line, false, { "kind: [PyTorchJob" })
  vim.wait(5000, function()
    local d = vim.diagnostic.get(0)
    return #d == 1 and ((d[1].code or ((d[1].user_data or {}).lsp or {}).code) == "parse-error")
  end, 5)
  result.parse_error_ms = (vim.loop.hrtime() - t0) / 1e6
  result.after_error = diags()
  vim.api.nvim_buf_set_lines(0, 0, -1, false, original)
  vim.wait(5000, function() return #vim.diagnostic.get(0) == #result.diagnostics end, 5)
  result.after_undo = diags()
  -- fix all
  local answers = vim.lsp.buf_request_sync(0, "textDocument/codeAction", {
    textDocument = { uri = vim.uri_from_bufnr(0) },
    range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 0 } },
    context = { diagnostics = {}, only = { "source.fixAll.kubelint-ml" } },
  }, 5000) or {}
  for _, a in pairs(answers) do
    for _, action in ipairs(a.result or {}) do
      if action.kind == "source.fixAll.kubelint-ml" then
        vim.lsp.util.apply_workspace_edit(action.edit, "utf-16")
      end
    end
  end
  result.fixed = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n") .. "\n"
  result.alive = not vim.lsp.client_is_stopped(id)
end)
if not ok then result.error = tostring(err) end
done()
