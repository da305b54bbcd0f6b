// placeholder: the handler is being written (inventory of one cluster)
export const handler = async () => ({});
