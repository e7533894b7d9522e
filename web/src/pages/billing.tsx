export default function Page() { return <p>billing</p>; }
