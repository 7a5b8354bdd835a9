/**
 * The console script's form asks: an ask's form (MCP's elicitation requestedSchema) as an
 * HTML form, inputs by type (text, email, url, date, number), a select for a single-select, a
 * checkbox for a boolean and for each option of a multi-select, each pre-filled with its
 * default, as MCP has a client do; and the object read back from it to post. The server
 * checks the object against the form: the form's own attributes only help the person. A
 * fragment of the one script console-script.ts puts together; a String.raw template: no
 * backtick and no dollar-brace in it.
 */

/** This fragment's text. */
export const ASK_FORM = String.raw`  // ---- Form asks: the form's fields as inputs, and the object they hold.
  function formOptions(field) {
    var items = field.type === 'array' ? (field.items || {}) : field;
    if (Array.isArray(items.enum)) return items.enum.map(function (value, i) {
      return { value: value, label: Array.isArray(items.enumNames) && typeof items.enumNames[i] === 'string' ? items.enumNames[i] : value };
    });
    var titled = Array.isArray(items.oneOf) ? items.oneOf : Array.isArray(items.anyOf) ? items.anyOf : [];
    return titled.map(function (option) { return { value: option.const, label: option.title || option.const }; });
  }
  function isSelect(field) { return field.type === 'string' && (Array.isArray(field.enum) || Array.isArray(field.oneOf)); }
  var INPUT_TYPES = { email: 'email', uri: 'url', date: 'date' };
  /** The inputs of one field, in a labelled row; its read() gives the value to post, or undefined to leave it out. */
  function formField(name, field, required) {
    var id = 'f-' + Math.random().toString(36).slice(2);
    var row = h('div', { class: 'form-field', 'data-field': name });
    var label = h('label', { for: id, text: field.title || name });
    if (required) add(label, [' ', h('span', { class: 'required', title: 'required', text: '*' })]);
    row.appendChild(label);
    var read;
    if (field.type === 'boolean') {
      var box = h('input', { id: id, type: 'checkbox', checked: field.default === true });
      row.insertBefore(box, label);
      read = function () { return box.checked; };
    } else if (field.type === 'array') {
      var set = h('fieldset', { id: id, class: 'options' });
      var boxes = formOptions(field).map(function (option) {
        var check = h('input', { type: 'checkbox', value: option.value, checked: Array.isArray(field.default) && field.default.indexOf(option.value) >= 0 });
        set.appendChild(h('label', { class: 'option' }, [check, ' ' + option.label]));
        return check;
      });
      row.appendChild(set);
      read = function () {
        var picked = boxes.filter(function (check) { return check.checked; }).map(function (check) { return check.value; });
        return picked.length > 0 || required ? picked : undefined;
      };
    } else if (isSelect(field)) {
      var select = h('select', { id: id });
      if (!required || field.default === undefined) select.appendChild(h('option', { value: '', text: required ? 'Choose…' : '(none)' }));
      formOptions(field).forEach(function (option) {
        select.appendChild(h('option', { value: option.value, text: option.label, selected: field.default === option.value }));
      });
      row.appendChild(select);
      read = function () { return select.value === '' ? undefined : select.value; };
    } else {
      var numeric = field.type === 'number' || field.type === 'integer';
      var input = h('input', {
        id: id,
        type: numeric ? 'number' : INPUT_TYPES[field.format] || 'text',
        step: field.type === 'integer' ? '1' : numeric ? 'any' : null,
        min: field.minimum, max: field.maximum, minlength: field.minLength, maxlength: field.maxLength,
        placeholder: field.format === 'date-time' ? '2026-12-31T09:30:00Z' : null,
        value: field.default,
      });
      row.appendChild(input);
      read = function () {
        if (input.value === '') return undefined;
        if (!numeric) return input.value;
        var number = Number(input.value);
        return isFinite(number) ? number : input.value;
      };
    }
    if (field.description) row.appendChild(h('p', { class: 'muted help', text: field.description }));
    return { row: row, read: read };
  }
  /** Fills the HTML form with the ask's fields; answers a function giving the object to post. */
  function formInputs(form, schema) {
    var required = Array.isArray(schema.required) ? schema.required : [];
    var fields = Object.keys(schema.properties || {}).map(function (name) {
      var field = formField(name, schema.properties[name], required.indexOf(name) >= 0);
      form.appendChild(field.row);
      return { name: name, read: field.read };
    });
    return function () {
      var value = Object.create(null);
      fields.forEach(function (field) {
        var read = field.read();
        if (read !== undefined) value[field.name] = read;
      });
      return value;
    };
  }

`;
